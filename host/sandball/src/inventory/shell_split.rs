//! Word splitting of INI host lines as Python's `shlex.split(line, comments=True)` does
//! it: POSIX quoting (`'…'` literal, `"…"` with `\"` and `\\` escapes, `\` outside quotes),
//! and `#` outside quotes ending the line, even in the middle of a word.

/// Why a line could not be split.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    /// A quote was opened and never closed.
    #[error("No closing quotation")]
    NoClosingQuotation,
    /// The line ended right after a backslash.
    #[error("No escaped character")]
    NoEscapedCharacter,
}

/// Splits `line` into words.
pub fn shell_split(line: &str) -> Result<Vec<String>, SplitError> {
    let mut words = Vec::new();
    let mut word = String::new();
    // Whether a word is in progress (it may be empty: `''`).
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\r' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '#' => break,
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        None => return Err(SplitError::NoClosingQuotation),
                        Some('\'') => break,
                        Some(q) => word.push(q),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        None => return Err(SplitError::NoClosingQuotation),
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            None => return Err(SplitError::NoEscapedCharacter),
                            Some(e @ ('"' | '\\')) => word.push(e),
                            Some(e) => {
                                word.push('\\');
                                word.push(e);
                            }
                        },
                        Some(q) => word.push(q),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.push(chars.next().ok_or(SplitError::NoEscapedCharacter)?);
            }
            other => {
                in_word = true;
                word.push(other);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<String> {
        shell_split(s).unwrap()
    }

    #[test]
    fn words_quotes_and_escapes() {
        assert_eq!(split("host a=1  b=2"), ["host", "a=1", "b=2"]);
        assert_eq!(
            split(r#"h msg="hello world" q='it''s'"#),
            ["h", "msg=hello world", "q=its"]
        );
        assert_eq!(split(r#"h x="'5'" y='"6"'"#), ["h", "x='5'", "y=\"6\""]);
        assert_eq!(split(r#"h p="a\"b\\c\d""#), ["h", r#"p=a"b\c\d"#]);
        assert_eq!(split(r"h a\ b"), ["h", "a b"]);
        assert_eq!(split("h e=''"), ["h", "e="]);
        assert_eq!(split("h ''"), ["h", ""]);
    }

    #[test]
    fn hash_starts_a_comment_outside_quotes() {
        assert_eq!(split("h a=1 # comment"), ["h", "a=1"]);
        assert_eq!(split("h a=x#y"), ["h", "a=x"]);
        assert_eq!(split("h a='x#y'"), ["h", "a=x#y"]);
        assert_eq!(
            split("h a=1 ; not a comment"),
            ["h", "a=1", ";", "not", "a", "comment"]
        );
    }

    #[test]
    fn unbalanced_quotes_are_errors() {
        assert_eq!(shell_split("h a='x"), Err(SplitError::NoClosingQuotation));
        assert_eq!(shell_split("h a=\"x"), Err(SplitError::NoClosingQuotation));
        assert_eq!(shell_split("h a\\"), Err(SplitError::NoEscapedCharacter));
    }
}
