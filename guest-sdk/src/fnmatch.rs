//! Shell-style patterns as Python's `fnmatch.fnmatchcase` reads them: `*`, `?` and
//! `[...]` (`[!...]` negates; a `[` without its `]` is itself), matched against a
//! whole name, no escapes.

/// Whether `name` matches the shell-style `pattern` as a whole.
pub fn fnmatch(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    let Some((&first, rest)) = p.split_first() else {
        return n.is_empty();
    };
    match first {
        '*' => (0..=n.len()).any(|skip| match_from(rest, &n[skip..])),
        '?' => !n.is_empty() && match_from(rest, &n[1..]),
        '[' => match bracket(rest) {
            Some((set, after)) => {
                !n.is_empty() && set.matches(n[0]) && match_from(&p[after + 1..], &n[1..])
            }
            None => n.first() == Some(&'[') && match_from(rest, &n[1..]),
        },
        c => n.first() == Some(&c) && match_from(rest, &n[1..]),
    }
}

/// A `[...]` character class.
struct CharSet {
    negated: bool,
    /// Inclusive ranges; a single character is a range of one.
    ranges: Vec<(char, char)>,
}

impl CharSet {
    fn matches(&self, c: char) -> bool {
        self.ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != self.negated
    }
}

/// Parses the class that follows a `[` in `p`; returns it and how many characters of
/// `p` it used (including the closing `]`), or `None` when there is no closing `]`
/// (the `[` is then literal).
fn bracket(p: &[char]) -> Option<(CharSet, usize)> {
    let mut i = 0;
    let negated = p.first() == Some(&'!');
    if negated {
        i += 1;
    }
    // A `]` right after the opening (or after `!`) is a member, not the end.
    let start = i;
    if p.get(i) == Some(&']') {
        i += 1;
    }
    while p.get(i).is_some_and(|&c| c != ']') {
        i += 1;
    }
    if i >= p.len() {
        return None;
    }
    let body = &p[start..i];
    let mut ranges = Vec::new();
    let mut j = 0;
    while j < body.len() {
        if j + 2 < body.len() && body[j + 1] == '-' {
            ranges.push((body[j], body[j + 2]));
            j += 3;
        } else {
            ranges.push((body[j], body[j]));
            j += 1;
        }
    }
    Some((CharSet { negated, ranges }, i + 1))
}

#[cfg(test)]
mod tests {
    use super::fnmatch;

    #[test]
    fn matches_names_like_fnmatch() {
        assert!(fnmatch("*.txt", "a.txt"));
        assert!(!fnmatch("*.txt", "a.txt.bak"));
        assert!(fnmatch("a?c", "abc"));
        assert!(!fnmatch("a?c", "ac"));
        assert!(fnmatch("[abc]x", "bx"));
        assert!(fnmatch("[a-c]x", "cx"));
        assert!(!fnmatch("[!a-c]x", "cx"));
        assert!(fnmatch("[!a-c]x", "dx"));
        assert!(fnmatch("[]]", "]"));
        assert!(fnmatch("[x", "[x"));
        assert!(fnmatch("x-[a-]", "x--"));
    }
}
