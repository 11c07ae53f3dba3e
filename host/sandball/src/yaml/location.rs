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

/// `msg` followed by where it happened, as ansible-core ends an error: "…\n\nThe error
/// appears to be in " and `place` described (`'file:line:column'` for a task or keyword,
/// see [`Location::appears_in`]; `the template 'path'` for a template file). The one
/// place that block is written.
pub fn error_appears_in(place: impl fmt::Display, msg: impl fmt::Display) -> String {
    format!("{msg}\n\nThe error appears to be in {place}.")
}

impl Location {
    /// `msg` followed by where it happened, as ansible-core ends an error about a task
    /// or keyword: "…\n\nThe error appears to be in 'file:line:column'." (see
    /// [`error_appears_in`]).
    pub fn appears_in(&self, msg: impl fmt::Display) -> String {
        error_appears_in(format_args!("'{self}'"), msg)
    }

    /// ansible-core 2.19's `Origin:` block for an error here: the absolute, normalized
    /// `file:line:column` and, when `source` and the file can be read, its lines up to
    /// this one (the two before it too), numbered (tabs shown as spaces), with a caret
    /// under the column.
    pub fn origin_block(&self, source: bool) -> String {
        // Absolute and normalized, as Python's `os.path.abspath` gives it.
        let file = crate::local_files::normalized(
            &std::path::absolute(&self.file).unwrap_or_else(|_| self.file.clone()),
        );
        let mut out = format!("Origin: {}:{}:{}\n", file.display(), self.line, self.column);
        if let Some(text) = source
            .then(|| std::fs::read_to_string(&self.file).ok())
            .flatten()
            && self.line > 0
        {
            let width = self.line.to_string().len();
            let first = self.line.saturating_sub(2).max(1);
            // A quoted line is at most 120 characters with its number: a longer one is
            // cut, ending in `...`, and a column past what is left gets no caret.
            let room = 120 - width - 1;
            let mut usable = room;
            out.push('\n');
            for (n, line) in text
                .lines()
                .enumerate()
                .map(|(i, l)| (i + 1, l))
                .skip(first - 1)
                .take(self.line + 1 - first)
            {
                // Tabs show as spaces; an empty line is its number alone.
                let mut line = line.replace('\t', " ");
                if line.chars().count() > room {
                    line = line.chars().take(room - 3).collect::<String>() + "...";
                    usable = room - 3;
                }
                let gap = if line.is_empty() { "" } else { " " };
                out.push_str(&format!("{n:>width$}{gap}{line}\n"));
            }
            if (1..=usable).contains(&self.column) {
                let marker = format!("column {}", self.column);
                let at = self.column - 1;
                // A caret near the right edge comes after its words.
                let caret = if at + 2 + marker.len() > room {
                    format!(
                        "{}{marker} ^",
                        " ".repeat(at.saturating_sub(marker.len() + 1))
                    )
                } else {
                    format!("{}^ {marker}", " ".repeat(at))
                };
                out.push_str(&format!("{} {caret}\n", " ".repeat(width)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origin_block_quotes_the_lines_up_to_the_position() {
        let dir = std::env::temp_dir().join(format!("sandball-origin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.yml");
        std::fs::write(&file, "- a: 1\n\n- name: x\n  b: 2\n").unwrap();
        let at = Location {
            file: file.clone(),
            line: 3,
            column: 3,
        };
        assert_eq!(
            at.origin_block(true),
            format!(
                "Origin: {}:3:3\n\n1 - a: 1\n2\n3 - name: x\n    ^ column 3\n",
                file.display()
            )
        );
        assert_eq!(
            at.origin_block(false),
            format!("Origin: {}:3:3\n", file.display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn origin_block_cuts_long_lines_as_ansible_core_does() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t.yml");
        let long = format!("- name: {}", "x".repeat(130));
        std::fs::write(&file, format!("{long}\n- a: 1\n")).unwrap();
        let at = |line, column| {
            Location {
                file: file.clone(),
                line,
                column,
            }
            .origin_block(true)
        };
        // 118 characters are left beside a one-digit number: 115 and `...`.
        let cut = format!("{}...", &long[..115]);
        assert_eq!(
            at(1, 3),
            format!(
                "Origin: {}:1:3\n\n1 {cut}\n    ^ column 3\n",
                file.display()
            )
        );
        // The caret of a column near the edge comes after its words; one past the
        // cut has none.
        assert!(at(1, 110).ends_with(&format!("\n  {}column 110 ^\n", " ".repeat(98))));
        assert!(at(1, 117).ends_with(&format!("{cut}\n")));
        assert!(at(2, 3).ends_with("\n2 - a: 1\n    ^ column 3\n"));
    }

    #[test]
    fn the_error_appears_at_a_position_or_in_a_described_place() {
        let location = Location {
            file: PathBuf::from("site.yml"),
            line: 4,
            column: 7,
        };
        assert_eq!(
            location.appears_in("bad"),
            "bad\n\nThe error appears to be in 'site.yml:4:7'."
        );
        assert_eq!(
            error_appears_in("the template 't.j2'", "bad"),
            "bad\n\nThe error appears to be in the template 't.j2'."
        );
    }

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
