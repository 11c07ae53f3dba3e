//! Shell-style patterns as Python's `fnmatch.fnmatchcase` reads them: `*`, `?` and
//! `[...]` (`[!...]` negates; a `[` without its `]` is itself), matched against a
//! whole name, no escapes, case-sensitively: how modules match file and package
//! names, and how the controller matches host patterns, `--start-at-task` and globs.

/// Whether `name` matches the shell-style `pattern` as a whole.
pub fn fnmatch(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Each token but `*` matches one character, so on a mismatch only the last `*`
    // needs to take one more character: linear backtracking, never exponential.
    let (mut pi, mut ni) = (0, 0);
    // The pattern index after the last `*` seen and the name index it matched up to.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if let Some(&token) = p.get(pi) {
            let step = match token {
                '*' => {
                    star = Some((pi + 1, ni));
                    pi += 1;
                    continue;
                }
                '?' => Some(1),
                '[' => match bracket(&p[pi + 1..]) {
                    Some((set, used)) => set.matches(n[ni]).then_some(used + 1),
                    None => (n[ni] == '[').then_some(1),
                },
                c => (n[ni] == c).then_some(1),
            };
            if let Some(step) = step {
                pi += step;
                ni += 1;
                continue;
            }
        }
        match star {
            Some((after, taken)) => {
                star = Some((after, taken + 1));
                pi = after;
                ni = taken + 1;
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
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

    #[test]
    fn globs() {
        assert!(fnmatch("web*", "web01"));
        assert!(fnmatch("web*", "web"));
        assert!(!fnmatch("web*", "aweb"));
        assert!(fnmatch("w?b", "web"));
        assert!(fnmatch("db[0-9]", "db7"));
        assert!(!fnmatch("db[!0-9]", "db7"));
        assert!(fnmatch("db[!0-9]", "dbx"));
        assert!(fnmatch("a[]]b", "a]b"));
        assert!(fnmatch("a[-x]", "a-"));
        assert!(fnmatch("a[", "a["));
        assert!(fnmatch("x.y", "x.y"));
        assert!(!fnmatch("x.y", "xzy"));
        assert!(!fnmatch("WEB", "web"));
        assert!(!fnmatch("a[z-a]", "az"));
    }
}
