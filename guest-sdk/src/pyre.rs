//! Python `re` patterns, for the modules and template filters that take them
//! (`lineinfile`, `replace`, `regex_replace`…): lookaround and backreferences through
//! `fancy-regex`, with Python's meaning where its syntax differs — `$` also matches
//! before a final newline, `\Z` is the very end, a `{` that starts no repetition is a
//! literal — and replacement templates (`\1`, `\g<name>`) as `re.sub` reads them.

use fancy_regex::{Regex, RegexBuilder};
use std::borrow::Cow;
use std::ops::Range;

/// What went wrong with a pattern, a replacement template or a match.
#[derive(Debug, thiserror::Error)]
pub enum PyreError {
    /// The pattern does not compile.
    #[error("invalid regular expression {pattern:?}: {reason}")]
    Pattern { pattern: String, reason: String },
    /// The replacement template is malformed.
    #[error("bad replacement template {template:?}: {reason}")]
    Replacement { template: String, reason: String },
    /// Matching gave up (too much backtracking).
    #[error("regular expression {pattern:?} could not be matched: {reason}")]
    Matching { pattern: String, reason: String },
}

/// How a pattern must sit in the text (Python's `re.search`, `re.match`, `re.fullmatch`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Anchor {
    /// Anywhere.
    Search,
    /// At the start.
    Match,
    /// The whole text.
    Full,
}

/// A compiled Python pattern.
#[derive(Clone, Debug)]
pub struct Pattern {
    source: String,
    regex: Regex,
}

/// One match: the whole match is group 0; groups that did not take part are `None`.
pub type Groups<'t> = Vec<Option<&'t str>>;

impl Pattern {
    /// Compiles `pattern` with Python's `re.IGNORECASE` / `re.MULTILINE` flags.
    pub fn new(
        pattern: &str,
        ignorecase: bool,
        multiline: bool,
        anchor: Anchor,
    ) -> Result<Pattern, PyreError> {
        let multiline = multiline || leading_flags(pattern).contains('m');
        let body = translate(pattern, multiline);
        let translated = match anchor {
            Anchor::Search => body,
            Anchor::Match => format!("\\A(?:{body})"),
            Anchor::Full => format!("\\A(?:{body})\\z"),
        };
        let regex = RegexBuilder::new(&translated)
            .case_insensitive(ignorecase)
            .multi_line(multiline)
            .build()
            .map_err(|err| PyreError::Pattern {
                pattern: pattern.to_string(),
                reason: err.to_string(),
            })?;
        Ok(Pattern {
            source: pattern.to_string(),
            regex,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    fn failed(&self, err: fancy_regex::Error) -> PyreError {
        PyreError::Matching {
            pattern: self.source.clone(),
            reason: err.to_string(),
        }
    }

    /// Whether the pattern matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> Result<bool, PyreError> {
        self.regex.is_match(text).map_err(|e| self.failed(e))
    }

    /// The number of groups, not counting the whole match.
    pub fn groups(&self) -> usize {
        self.regex.captures_len() - 1
    }

    /// The first match's groups, with those named.
    pub fn search<'t>(&self, text: &'t str) -> Result<Option<Match<'t>>, PyreError> {
        let Some(captures) = self.regex.captures(text).map_err(|e| self.failed(e))? else {
            return Ok(None);
        };
        Ok(Some(self.groups_of(&captures)))
    }

    /// Every non-overlapping match, as `re.finditer`.
    pub fn find_all<'t>(&self, text: &'t str) -> Result<Vec<Match<'t>>, PyreError> {
        self.regex
            .captures_iter(text)
            .map(|captures| {
                captures
                    .map(|c| self.groups_of(&c))
                    .map_err(|e| self.failed(e))
            })
            .collect()
    }

    fn groups_of<'t>(&self, captures: &fancy_regex::Captures<'t, str>) -> Match<'t> {
        let groups = (0..captures.len())
            .map(|i| captures.get(i).map(|m| m.as_str()))
            .collect();
        let spans = (0..captures.len())
            .map(|i| captures.get(i).map(|m| m.range()))
            .collect();
        let start = captures.get(0).map_or(0, |m| m.start());
        let end = captures.get(0).map_or(0, |m| m.end());
        let names = self
            .regex
            .capture_names()
            .enumerate()
            .filter_map(|(i, name)| name.map(|n| (n.to_string(), i)))
            .collect();
        Match {
            groups,
            spans,
            names,
            start,
            end,
        }
    }

    /// `re.subn`: `text` with at most `count` matches (all when 0) replaced by the
    /// Python replacement `template`; also how many were replaced.
    pub fn sub<'t>(
        &self,
        template: &str,
        text: &'t str,
        count: usize,
    ) -> Result<(Cow<'t, str>, usize), PyreError> {
        let expansion = replacement(template)?;
        let found = self
            .regex
            .find_iter(text)
            .take(if count == 0 { usize::MAX } else { count });
        let mut made = 0;
        for m in found {
            m.map_err(|e| self.failed(e))?;
            made += 1;
        }
        let replaced = self
            .regex
            .try_replacen(text, count, expansion.as_str())
            .map_err(|e| self.failed(e))?;
        Ok((replaced, made))
    }
}

/// One match of a [`Pattern`].
#[derive(Clone, Debug, PartialEq)]
pub struct Match<'t> {
    /// Group 0 (the whole match), then each group; `None` where a group took no part.
    pub groups: Groups<'t>,
    spans: Vec<Option<Range<usize>>>,
    names: Vec<(String, usize)>,
    /// Where the whole match starts and ends in the text (bytes).
    pub start: usize,
    pub end: usize,
}

impl<'t> Match<'t> {
    /// The text of group `index` (0 is the whole match).
    pub fn get(&self, index: usize) -> Option<&'t str> {
        self.groups.get(index).copied().flatten()
    }

    /// The text of the group called `name`.
    pub fn name(&self, name: &str) -> Option<&'t str> {
        self.get(self.index_of(name)?)
    }

    /// Where the group called `name` starts and ends in the text (bytes).
    pub fn span_of(&self, name: &str) -> Option<Range<usize>> {
        self.spans.get(self.index_of(name)?).cloned().flatten()
    }

    fn index_of(&self, name: &str) -> Option<usize> {
        self.names.iter().find(|(n, _)| n == name).map(|(_, i)| *i)
    }

    /// Python's `match.expand(template)`: `\1`, `\g<name>` and escapes filled in; a
    /// group that took no part is empty.
    pub fn expand(&self, template: &str) -> Result<String, PyreError> {
        let mut out = String::with_capacity(template.len());
        for piece in parse_replacement(template)? {
            match piece {
                Piece::Text(text) => out.push_str(&text),
                Piece::Group(group) => {
                    let text = match group.parse::<usize>() {
                        Ok(index) if index < self.groups.len() => self.get(index),
                        Ok(_) => None.ok_or_else(|| bad(template, "invalid group reference"))?,
                        Err(_) => match self.names.iter().find(|(n, _)| *n == group) {
                            Some((_, index)) => self.get(*index),
                            None => None.ok_or_else(|| bad(template, "unknown group name"))?,
                        },
                    };
                    out.push_str(text.unwrap_or(""));
                }
            }
        }
        Ok(out)
    }
}

/// The flags a pattern sets at its start (`(?im)…`).
fn leading_flags(pattern: &str) -> String {
    let mut flags = String::new();
    let mut rest = pattern;
    while let Some(after) = rest.strip_prefix("(?") {
        let Some(end) = after.find(')') else { break };
        let group = &after[..end];
        if group.is_empty() || !group.chars().all(|c| c.is_ascii_alphabetic()) {
            break;
        }
        flags.push_str(group);
        rest = &after[end + 1..];
    }
    flags
}

/// Python's pattern syntax where fancy-regex reads it otherwise.
fn translate(pattern: &str, multiline: bool) -> String {
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.char_indices().peekable();
    // Inside a character class (`[...]`): `$` and `{` are literal there anyway.
    let mut in_class = false;
    while let Some((at, c)) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some((_, 'Z')) => out.push_str("\\z"),
                Some((_, next)) => {
                    out.push('\\');
                    out.push(next);
                }
                None => out.push('\\'),
            },
            '[' if !in_class => {
                in_class = true;
                out.push('[');
                // A `]` or `^]` right after the opening bracket is literal.
                if let Some((_, '^')) = chars.peek() {
                    out.push('^');
                    chars.next();
                }
                if let Some((_, ']')) = chars.peek() {
                    out.push_str("\\]");
                    chars.next();
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(']');
            }
            '$' if !in_class && !multiline => out.push_str("(?=\\n?\\z)"),
            '{' if !in_class && !is_repetition(&pattern[at..]) => out.push_str("\\{"),
            c => out.push(c),
        }
    }
    out
}

/// Whether `text` (starting at a `{`) is a repetition: `{n}`, `{n,}`, `{,m}`, `{n,m}`.
fn is_repetition(text: &str) -> bool {
    let Some(end) = text.find('}') else {
        return false;
    };
    let inner = &text[1..end];
    let (low, high) = inner.split_once(',').unwrap_or((inner, inner));
    !(low.is_empty() && high.is_empty())
        && low.chars().all(|c| c.is_ascii_digit())
        && high.chars().all(|c| c.is_ascii_digit())
}

/// A piece of a parsed replacement template.
enum Piece {
    Text(String),
    Group(String),
}

fn bad(template: &str, reason: &str) -> PyreError {
    PyreError::Replacement {
        template: template.to_string(),
        reason: reason.to_string(),
    }
}

/// Reads a Python replacement template (`\1`, `\g<1>`, `\g<name>`, `\n`…).
fn parse_replacement(template: &str) -> Result<Vec<Piece>, PyreError> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        let group = match chars.next() {
            Some(d @ '1'..='9') => {
                let mut group = String::from(d);
                if let Some(e) = chars.next_if(char::is_ascii_digit) {
                    group.push(e);
                }
                group
            }
            Some('g') => {
                if chars.next() != Some('<') {
                    return Err(bad(template, "missing < after \\g"));
                }
                let name: String = chars.by_ref().take_while(|c| *c != '>').collect();
                if name.is_empty() {
                    return Err(bad(template, "empty group name"));
                }
                name
            }
            Some(escape) => {
                match escape {
                    'n' => text.push('\n'),
                    't' => text.push('\t'),
                    'r' => text.push('\r'),
                    'f' => text.push('\x0c'),
                    'v' => text.push('\x0b'),
                    'a' => text.push('\x07'),
                    '0' => text.push('\0'),
                    '\\' => text.push('\\'),
                    other if other.is_ascii_alphabetic() => {
                        return Err(bad(template, &format!("unknown escape \\{other}")));
                    }
                    other => {
                        text.push('\\');
                        text.push(other);
                    }
                }
                continue;
            }
            None => return Err(bad(template, "trailing backslash")),
        };
        if !text.is_empty() {
            pieces.push(Piece::Text(std::mem::take(&mut text)));
        }
        pieces.push(Piece::Group(group));
    }
    if !text.is_empty() {
        pieces.push(Piece::Text(text));
    }
    Ok(pieces)
}

/// A Python replacement template in fancy-regex's own syntax (`${1}`, `${name}`, a
/// literal `$` as `$$`).
fn replacement(template: &str) -> Result<String, PyreError> {
    let mut out = String::with_capacity(template.len() + 8);
    for piece in parse_replacement(template)? {
        match piece {
            Piece::Text(text) => out.push_str(&text.replace('$', "$$")),
            Piece::Group(group) => {
                out.push_str("${");
                out.push_str(&group);
                out.push('}');
            }
        }
    }
    Ok(out)
}

/// Python's `re.escape`: a backslash before every character special in patterns.
pub fn escape_python(s: &str) -> String {
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
pub fn escape_posix_basic(s: &str) -> String {
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

    fn search(pattern: &str) -> Pattern {
        Pattern::new(pattern, false, false, Anchor::Search).unwrap()
    }

    #[test]
    fn anchors_follow_python() {
        let matching = Pattern::new("b", false, false, Anchor::Match).unwrap();
        let full = Pattern::new("ab", false, false, Anchor::Full).unwrap();
        assert!(search("b").is_match("ab").unwrap());
        assert!(!matching.is_match("ab").unwrap());
        assert!(matching.is_match("ba").unwrap());
        assert!(full.is_match("ab").unwrap());
        assert!(!full.is_match("abc").unwrap());
    }

    #[test]
    fn flags_and_python_syntax() {
        let ignorecase = Pattern::new("ABC", true, false, Anchor::Search).unwrap();
        assert!(ignorecase.is_match("xabc").unwrap());
        let multiline = Pattern::new("^b", false, true, Anchor::Search).unwrap();
        assert!(multiline.is_match("a\nb").unwrap());
        assert!(!search("^b").is_match("a\nb").unwrap());
        assert!(search("(?m)^b").is_match("a\nb").unwrap());
        assert!(search("a\\Z").is_match("ba").unwrap());
        assert!(!search("a\\Z").is_match("ab").unwrap());
        assert!(!search("a\\Z").is_match("ba\n").unwrap());
        let named = search("x(?P<word>\\w+)")
            .search("a xhi there")
            .unwrap()
            .unwrap();
        assert_eq!(named.name("word"), Some("hi"));
        assert_eq!(named.span_of("word"), Some(3..5));
        assert_eq!(named.span_of("nothing"), None);
        assert!(Pattern::new("(", false, false, Anchor::Search).is_err());
    }

    #[test]
    fn dollar_also_matches_before_a_final_newline() {
        assert!(search("^foo$").is_match("foo\n").unwrap());
        assert!(!search("^foo$").is_match("foo\nbar").unwrap());
        assert!(search("[$]").is_match("a$").unwrap());
        let m = search("o$").search("foo\n").unwrap().unwrap();
        assert_eq!((m.start, m.end), (2, 3));
    }

    #[test]
    fn lookaround_backreferences_and_literal_braces() {
        assert!(search("foo(?=bar)").is_match("foobar").unwrap());
        assert!(!search("foo(?!bar)").is_match("foobar").unwrap());
        assert!(search("(?<=x)y").is_match("xy").unwrap());
        assert!(search("(a)\\1").is_match("aa").unwrap());
        assert!(search("(?P<c>a)(?P=c)").is_match("aa").unwrap());
        assert!(search("{{ x }}").is_match("a {{ x }}").unwrap());
        assert!(search("a{2}").is_match("aa").unwrap());
        assert!(!search("a{2}").is_match("a{2}").unwrap());
        assert!(search("[]a]").is_match("]").unwrap());
    }

    #[test]
    fn substitution_and_expansion() {
        let re = search("(\\w+)@(\\w+)");
        let (text, made) = re
            .sub("\\2 at \\1 costs $1", "me@home, you@work", 0)
            .unwrap();
        assert_eq!(text, "home at me costs $1, work at you costs $1");
        assert_eq!(made, 2);
        let (text, made) = re.sub("\\g<2>", "me@home, you@work", 1).unwrap();
        assert_eq!((text.as_ref(), made), ("home, you@work", 1));
        let m = re.search("me@home").unwrap().unwrap();
        assert_eq!(m.expand("\\2-\\1\\n").unwrap(), "home-me\n");
        assert!(m.expand("\\3").is_err());
        assert!(re.sub("\\q", "x", 0).is_err());
        assert!(re.sub("\\", "x", 0).is_err());
        let optional = search("a(b)?").search("a").unwrap().unwrap();
        assert_eq!(optional.expand("[\\1]").unwrap(), "[]");
        assert_eq!(
            search("(\\w+)").find_all("a bc").unwrap()[1].get(1),
            Some("bc")
        );
    }

    #[test]
    fn escaping() {
        assert_eq!(escape_python("a.b*c d"), "a\\.b\\*c\\ d");
        assert_eq!(escape_python("under_score"), "under_score");
        assert_eq!(escape_posix_basic("a.b[c]"), "a\\.b\\[c\\]");
    }
}
