//! Splitting a command line into words the way Python's `shlex.split` does (POSIX
//! mode), which is how Ansible's `command` module and `validate` options turn a string
//! into a program and its arguments, how the grants' `$cmd[0]` names that program, and
//! (with comments) how the INI inventory reads a host line. No shell features apply:
//! quotes and backslashes group and escape, nothing else is special.

use std::fmt;

/// Why a command line could not be split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitError {
    /// A quote was opened and never closed.
    NoClosingQuotation,
    /// The line ends with a lone backslash.
    NoEscapedCharacter,
}

impl fmt::Display for SplitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SplitError::NoClosingQuotation => "No closing quotation",
            SplitError::NoEscapedCharacter => "No escaped character",
        })
    }
}

impl std::error::Error for SplitError {}

/// Where the splitter is inside the current word.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    /// Between words.
    Space,
    /// Inside a word, outside quotes.
    Word,
    /// Inside single quotes: everything is literal.
    Single,
    /// Inside double quotes: a backslash escapes only `"` and `\`.
    Double,
}

/// Splits `line` into words: whitespace (space, tab, CR, LF) separates words, single
/// quotes keep everything literal, double quotes keep everything but `\"` and `\\`,
/// a backslash outside quotes takes the next character literally, and an empty
/// quoted string is an empty word. `#` is an ordinary character.
pub fn split(line: &str) -> Result<Vec<String>, SplitError> {
    split_words(line, false)
}

/// [`split`] as `shlex.split(line, comments=True)` does it: a `#` outside quotes ends
/// the line, even in the middle of a word.
pub fn split_comments(line: &str) -> Result<Vec<String>, SplitError> {
    split_words(line, true)
}

fn split_words(line: &str, comments: bool) -> Result<Vec<String>, SplitError> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut state = State::Space;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match state {
            State::Space | State::Word => match c {
                '#' if comments => break,
                ' ' | '\t' | '\r' | '\n' => {
                    if state == State::Word {
                        words.push(std::mem::take(&mut word));
                        state = State::Space;
                    }
                }
                '\'' => state = State::Single,
                '"' => state = State::Double,
                '\\' => {
                    word.push(chars.next().ok_or(SplitError::NoEscapedCharacter)?);
                    state = State::Word;
                }
                other => {
                    word.push(other);
                    state = State::Word;
                }
            },
            State::Single => match c {
                '\'' => state = State::Word,
                other => word.push(other),
            },
            State::Double => match c {
                '"' => state = State::Word,
                '\\' => {
                    let next = chars.next().ok_or(SplitError::NoEscapedCharacter)?;
                    if next != '"' && next != '\\' {
                        word.push('\\');
                    }
                    word.push(next);
                }
                other => word.push(other),
            },
        }
    }
    match state {
        State::Single | State::Double => Err(SplitError::NoClosingQuotation),
        State::Word => {
            words.push(word);
            Ok(words)
        }
        State::Space => Ok(words),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(line: &str) -> Vec<String> {
        split(line).unwrap()
    }

    #[test]
    fn splits_on_whitespace_and_keeps_quoted_groups() {
        assert_eq!(s("  echo  hello\tworld \r\n"), ["echo", "hello", "world"]);
        assert_eq!(s("ls 'a b' \"c d\""), ["ls", "a b", "c d"]);
        assert_eq!(s("a'b c'd"), ["ab cd"]);
        assert!(s("").is_empty());
    }

    #[test]
    fn hash_is_not_a_comment() {
        assert_eq!(s("echo hi # there"), ["echo", "hi", "#", "there"]);
    }

    #[test]
    fn empty_quotes_make_an_empty_word() {
        assert_eq!(s("printf '' x"), ["printf", "", "x"]);
        assert_eq!(s("a \"\""), ["a", ""]);
    }

    #[test]
    fn backslashes_follow_python_posix_rules() {
        assert_eq!(s(r"a\ b"), ["a b"]);
        assert_eq!(s(r#""x\"y" "p\$q" "r\\s""#), [r#"x"y"#, r"p\$q", r"r\s"]);
        assert_eq!(s(r"'no\escape'"), [r"no\escape"]);
        assert_eq!(s("a\\\nb"), ["a\nb"]);
    }

    #[test]
    fn reports_unbalanced_input() {
        assert_eq!(split("echo 'x"), Err(SplitError::NoClosingQuotation));
        assert_eq!(split("echo \"x"), Err(SplitError::NoClosingQuotation));
        assert_eq!(split("echo x\\"), Err(SplitError::NoEscapedCharacter));
        assert_eq!(split("\"a\\"), Err(SplitError::NoEscapedCharacter));
    }

    /// `shlex.split(line, comments=True)`, as the INI inventory reads host lines.
    fn c(line: &str) -> Vec<String> {
        split_comments(line).unwrap()
    }

    #[test]
    fn words_quotes_and_escapes() {
        assert_eq!(c("host a=1  b=2"), ["host", "a=1", "b=2"]);
        assert_eq!(
            c(r#"h msg="hello world" q='it''s'"#),
            ["h", "msg=hello world", "q=its"]
        );
        assert_eq!(c(r#"h x="'5'" y='"6"'"#), ["h", "x='5'", "y=\"6\""]);
        assert_eq!(c(r#"h p="a\"b\\c\d""#), ["h", r#"p=a"b\c\d"#]);
        assert_eq!(c(r"h a\ b"), ["h", "a b"]);
        assert_eq!(c("h e=''"), ["h", "e="]);
        assert_eq!(c("h ''"), ["h", ""]);
    }

    #[test]
    fn hash_starts_a_comment_outside_quotes() {
        assert_eq!(c("h a=1 # comment"), ["h", "a=1"]);
        assert_eq!(c("h a=x#y"), ["h", "a=x"]);
        assert_eq!(c("h a='x#y'"), ["h", "a=x#y"]);
        assert_eq!(
            c("h a=1 ; not a comment"),
            ["h", "a=1", ";", "not", "a", "comment"]
        );
    }

    #[test]
    fn unbalanced_quotes_are_errors() {
        assert_eq!(
            split_comments("h a='x"),
            Err(SplitError::NoClosingQuotation)
        );
        assert_eq!(
            split_comments("h a=\"x"),
            Err(SplitError::NoClosingQuotation)
        );
        assert_eq!(split_comments("h a\\"), Err(SplitError::NoEscapedCharacter));
    }
}
