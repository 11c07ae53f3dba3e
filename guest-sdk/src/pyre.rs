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
    /// The replacement template is malformed (Python's words: "bad escape \D at
    /// position 0").
    #[error("{reason}")]
    Replacement { reason: String },
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
    /// The named groups and their numbers.
    names: Vec<(String, usize)>,
}

/// Why a pattern does not compile, in Python's words where they are known ("nothing to
/// repeat at position 0"); `prefix` is what the anchoring added before the pattern.
fn python_reason(err: &fancy_regex::Error, prefix: usize) -> String {
    match err {
        fancy_regex::Error::ParseError(at, fancy_regex::ParseError::TargetNotRepeatable) => {
            format!(
                "nothing to repeat at position {}",
                at.saturating_sub(prefix)
            )
        }
        other => other.to_string(),
    }
}

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
        let (translated, prefix) = match anchor {
            Anchor::Search => (body, 0),
            Anchor::Match => (format!("\\A(?:{body})"), 5),
            Anchor::Full => (format!("\\A(?:{body})\\z"), 5),
        };
        let regex = RegexBuilder::new(&translated)
            .case_insensitive(ignorecase)
            .multi_line(multiline)
            .build()
            .map_err(|err| PyreError::Pattern {
                pattern: pattern.to_string(),
                reason: python_reason(&err, prefix),
            })?;
        let names = regex
            .capture_names()
            .enumerate()
            .filter_map(|(i, name)| name.map(|n| (n.to_string(), i)))
            .collect();
        Ok(Pattern {
            source: pattern.to_string(),
            regex,
            names,
        })
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

    /// The named groups, with their numbers, in the order they appear.
    pub fn group_names(&self) -> impl Iterator<Item = (&str, usize)> {
        self.names.iter().map(|(n, i)| (n.as_str(), *i))
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
        Match {
            groups,
            spans,
            names: self.names.clone(),
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
        let groups = GroupNames {
            count: self.groups(),
            names: &self.names,
        };
        let pieces = parse_replacement(template, &groups)?;
        let limit = if count == 0 { usize::MAX } else { count };
        let mut out = String::new();
        let mut last = 0;
        let mut made = 0;
        for captures in self.regex.captures_iter(text).take(limit) {
            let captures = captures.map_err(|e| self.failed(e))?;
            let Some(whole) = captures.get(0) else {
                continue;
            };
            out.push_str(&text[last..whole.start()]);
            for piece in &pieces {
                match piece {
                    Piece::Text(t) => out.push_str(t),
                    Piece::Group(i) => out.push_str(captures.get(*i).map_or("", |m| m.as_str())),
                }
            }
            last = whole.end();
            made += 1;
        }
        if made == 0 {
            return Ok((Cow::Borrowed(text), 0));
        }
        out.push_str(&text[last..]);
        Ok((Cow::Owned(out), made))
    }
}

/// One match of a [`Pattern`].
#[derive(Clone, Debug, PartialEq)]
pub struct Match<'t> {
    /// Group 0 (the whole match), then each group; `None` where a group took no part.
    groups: Vec<Option<&'t str>>,
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
        let groups = GroupNames {
            count: self.groups.len() - 1,
            names: &self.names,
        };
        let mut out = String::with_capacity(template.len());
        for piece in parse_replacement(template, &groups)? {
            match piece {
                Piece::Text(text) => out.push_str(&text),
                Piece::Group(index) => out.push_str(self.get(index).unwrap_or("")),
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
    /// A group, by number.
    Group(usize),
}

/// The groups a template may name: how many there are and the named ones.
struct GroupNames<'a> {
    count: usize,
    names: &'a [(String, usize)],
}

fn bad(reason: String) -> PyreError {
    PyreError::Replacement { reason }
}

/// Reads a Python replacement template (`\1`, `\g<1>`, `\g<name>`, `\n`…), with
/// Python's messages for what it refuses.
fn parse_replacement(template: &str, groups: &GroupNames) -> Result<Vec<Piece>, PyreError> {
    let mut pieces = Vec::new();
    let mut text = String::new();
    let mut chars = template.chars().enumerate().peekable();
    let number = |digits: &str, at: usize| -> Result<usize, PyreError> {
        match digits.parse::<usize>() {
            Ok(n) if n <= groups.count => Ok(n),
            _ => Err(bad(format!(
                "invalid group reference {digits} at position {at}"
            ))),
        }
    };
    while let Some((at, c)) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        let group = match chars.next() {
            Some((_, d @ '1'..='9')) => {
                let mut digits = String::from(d);
                if let Some((_, e)) = chars.next_if(|(_, c)| c.is_ascii_digit()) {
                    digits.push(e);
                }
                number(&digits, at + 1)?
            }
            Some((g, 'g')) => {
                if chars.next_if(|(_, c)| *c == '<').is_none() {
                    return Err(bad(format!("missing < at position {}", g + 1)));
                }
                let start = g + 2;
                let mut name = String::new();
                let mut closed = false;
                for (_, c) in chars.by_ref() {
                    if c == '>' {
                        closed = true;
                        break;
                    }
                    name.push(c);
                }
                if name.is_empty() {
                    return Err(bad(format!("missing group name at position {start}")));
                }
                if !closed {
                    return Err(bad(format!(
                        "missing >, unterminated name at position {start}"
                    )));
                }
                if name.chars().all(|c| c.is_ascii_digit()) {
                    number(&name, start)?
                } else {
                    groups
                        .names
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, i)| *i)
                        .ok_or_else(|| bad(format!("unknown group name '{name}'")))?
                }
            }
            Some((_, escape)) => {
                match escape {
                    'n' => text.push('\n'),
                    't' => text.push('\t'),
                    'r' => text.push('\r'),
                    'f' => text.push('\x0c'),
                    'v' => text.push('\x0b'),
                    'a' => text.push('\x07'),
                    'b' => text.push('\x08'),
                    '0' => text.push('\0'),
                    '\\' => text.push('\\'),
                    other if other.is_ascii_alphabetic() => {
                        return Err(bad(format!("bad escape \\{other} at position {at}")));
                    }
                    other => {
                        text.push('\\');
                        text.push(other);
                    }
                }
                continue;
            }
            None => return Err(bad(format!("bad escape (end of pattern) at position {at}"))),
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
    fn errors_in_pythons_words() {
        for anchor in [Anchor::Search, Anchor::Match] {
            let err = Pattern::new("a**", false, false, anchor).unwrap_err();
            assert!(
                err.to_string().ends_with("nothing to repeat at position 2"),
                "{err}"
            );
        }
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
        // Python's own words for what a template gets wrong.
        let error = |template: &str| re.sub(template, "a@b", 0).unwrap_err().to_string();
        assert_eq!(error("\\D"), "bad escape \\D at position 0");
        assert_eq!(error("a\\"), "bad escape (end of pattern) at position 1");
        assert_eq!(error("\\g"), "missing < at position 2");
        assert_eq!(error("\\g<>"), "missing group name at position 3");
        assert_eq!(error("\\g<a"), "missing >, unterminated name at position 3");
        assert_eq!(error("\\3"), "invalid group reference 3 at position 1");
        assert_eq!(error("\\g<x>"), "unknown group name 'x'");
        assert!(m.expand("\\3").is_err());
        let named = search("(?P<user>\\w+)@");
        assert_eq!(named.sub("<\\g<user>>", "me@x", 0).unwrap().0, "<me>x");
        assert_eq!(named.sub("\\b", "me@", 0).unwrap().0, "\x08");
        // Nothing found: the text itself.
        assert_eq!(
            re.sub("x", "nothing", 0).unwrap(),
            (Cow::Borrowed("nothing"), 0)
        );
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
