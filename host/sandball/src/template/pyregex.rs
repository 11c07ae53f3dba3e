//! Python `re` patterns and replacement templates on the `regex` crate, for the regex
//! filters and tests: `\Z`, `(?P<name>...)`, and `\1` / `\g<name>` in replacements.

use minijinja::{Error, ErrorKind};
use regex::Regex;

/// How a pattern must sit in the text (Python's `re.search`, `re.match`, `re.fullmatch`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Anchor {
    /// Anywhere.
    Search,
    /// At the start.
    Match,
    /// The whole text.
    Full,
}

/// Compiles a Python pattern.
pub(crate) fn compile(
    pattern: &str,
    ignorecase: bool,
    multiline: bool,
    anchor: Anchor,
) -> Result<Regex, Error> {
    let mut translated = String::with_capacity(pattern.len() + 16);
    if ignorecase {
        translated.push_str("(?i)");
    }
    if multiline {
        translated.push_str("(?m)");
    }
    let body = translate(pattern);
    match anchor {
        Anchor::Search => translated.push_str(&body),
        Anchor::Match => {
            translated.push_str("\\A(?:");
            translated.push_str(&body);
            translated.push(')');
        }
        Anchor::Full => {
            translated.push_str("\\A(?:");
            translated.push_str(&body);
            translated.push_str(")\\z");
        }
    }
    Regex::new(&translated).map_err(|err| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("invalid regular expression {pattern:?}: {err}"),
        )
    })
}

/// Python's pattern syntax where it differs from the regex crate's: `\Z` is `\z`.
fn translate(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('Z') => out.push_str("\\z"),
            Some(next) => {
                out.push('\\');
                out.push(next);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// A Python replacement template (`\1`, `\g<1>`, `\g<name>`, `\n`) as a regex crate
/// replacement (`${1}`, `${name}`, a literal `$` as `$$`).
pub(crate) fn replacement(template: &str) -> Result<String, Error> {
    let bad = |what: &str| {
        Error::new(
            ErrorKind::InvalidOperation,
            format!("bad replacement template {template:?}: {what}"),
        )
    };
    let mut out = String::with_capacity(template.len() + 8);
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '$' => out.push_str("$$"),
            '\\' => match chars.next() {
                Some(d @ '1'..='9') => {
                    let mut group = String::from(d);
                    if let Some(e) = chars.next_if(char::is_ascii_digit) {
                        group.push(e);
                    }
                    out.push_str(&format!("${{{group}}}"));
                }
                Some('g') => {
                    if chars.next() != Some('<') {
                        return Err(bad("missing < after \\g"));
                    }
                    let name: String = chars.by_ref().take_while(|c| *c != '>').collect();
                    if name.is_empty() {
                        return Err(bad("empty group name"));
                    }
                    out.push_str(&format!("${{{name}}}"));
                }
                Some('n') => out.push('\n'),
                Some('t') => out.push('\t'),
                Some('r') => out.push('\r'),
                Some('f') => out.push('\x0c'),
                Some('v') => out.push('\x0b'),
                Some('a') => out.push('\x07'),
                Some('0') => out.push('\0'),
                Some('\\') => out.push('\\'),
                Some(other) if other.is_ascii_alphabetic() => {
                    return Err(bad(&format!("unknown escape \\{other}")));
                }
                Some(other) => {
                    out.push('\\');
                    if other == '$' {
                        out.push_str("$$");
                    } else {
                        out.push(other);
                    }
                }
                None => return Err(bad("trailing backslash")),
            },
            c => out.push(c),
        }
    }
    Ok(out)
}

/// Python's `re.escape`: a backslash before every character special in patterns.
pub(crate) fn escape_python(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if "()[]{}?*+-|^$\\.&~# \t\n\r\x0b\x0c".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Escapes for POSIX basic regular expressions (`grep`, `sed`).
pub(crate) fn escape_posix_basic(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 2);
    for c in s.chars() {
        if ".[]\\*^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anchors_follow_python() {
        let search = compile("b", false, false, Anchor::Search).unwrap();
        let matching = compile("b", false, false, Anchor::Match).unwrap();
        let full = compile("ab", false, false, Anchor::Full).unwrap();
        assert!(search.is_match("ab"));
        assert!(!matching.is_match("ab"));
        assert!(matching.is_match("ba"));
        assert!(full.is_match("ab"));
        assert!(!full.is_match("abc"));
    }

    #[test]
    fn flags_and_python_syntax() {
        assert!(
            compile("ABC", true, false, Anchor::Search)
                .unwrap()
                .is_match("xabc")
        );
        assert!(
            compile("^b", false, true, Anchor::Search)
                .unwrap()
                .is_match("a\nb")
        );
        assert!(
            !compile("^b", false, false, Anchor::Search)
                .unwrap()
                .is_match("a\nb")
        );
        let z = compile("a\\Z", false, false, Anchor::Search).unwrap();
        assert!(z.is_match("ba"));
        assert!(!z.is_match("ab"));
        let named = compile("(?P<word>\\w+)", false, false, Anchor::Search).unwrap();
        assert_eq!(&named.captures("hi there").unwrap()["word"], "hi");
        assert!(compile("(", false, false, Anchor::Search).is_err());
    }

    #[test]
    fn replacement_templates() {
        assert_eq!(
            replacement("\\1-\\g<2>-\\g<name>").unwrap(),
            "${1}-${2}-${name}"
        );
        assert_eq!(replacement("$5 \\n").unwrap(), "$$5 \n");
        assert_eq!(replacement("a\\.b").unwrap(), "a\\.b");
        assert_eq!(replacement("\\12").unwrap(), "${12}");
        assert!(replacement("\\q").is_err());
        assert!(replacement("\\").is_err());
        let re = compile("(\\w+)@(\\w+)", false, false, Anchor::Search).unwrap();
        let rep = replacement("\\2 at \\1 costs $1").unwrap();
        assert_eq!(
            re.replace_all("me@home", rep.as_str()),
            "home at me costs $1"
        );
    }

    #[test]
    fn escaping() {
        assert_eq!(escape_python("a.b*c d"), "a\\.b\\*c\\ d");
        assert_eq!(escape_python("under_score"), "under_score");
        assert_eq!(escape_posix_basic("a.b[c]"), "a\\.b\\[c\\]");
    }
}
