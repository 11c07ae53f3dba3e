//! Shell globs as Python's `fnmatch.translate` reads them (`*`, `?`, `[seq]`, `[!seq]`),
//! turned into regular expressions that must match a whole name, case-sensitively.

/// The regular expression for `glob`.
pub fn translate(glob: &str) -> String {
    let chars: Vec<char> = glob.chars().collect();
    let mut out = String::from(r"\A(?s:");
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '*' => {
                while chars.get(i) == Some(&'*') {
                    i += 1;
                }
                out.push_str(".*");
            }
            '?' => out.push('.'),
            '[' => match class_end(&chars, i) {
                Some(end) => {
                    out.push_str(&class(&chars[i..end]));
                    i = end + 1;
                }
                None => out.push_str(r"\["),
            },
            other => out.push_str(&regex::escape(&other.to_string())),
        }
    }
    out.push_str(r")\z");
    out
}

/// The index of the `]` closing a class that starts at `start` (after its `[`): a `!` and
/// then a `]` right at the start belong to the class.
fn class_end(chars: &[char], start: usize) -> Option<usize> {
    let mut j = start;
    if chars.get(j) == Some(&'!') {
        j += 1;
    }
    if chars.get(j) == Some(&']') {
        j += 1;
    }
    (j..chars.len()).find(|k| chars[*k] == ']')
}

/// A character class from the text between the brackets; reversed ranges match nothing.
fn class(body: &[char]) -> String {
    let (negate, items) = match body.first() {
        Some('!') => (true, &body[1..]),
        _ => (false, body),
    };
    let hex = |c: char| format!(r"\x{{{:x}}}", u32::from(c));
    let mut parts = String::new();
    let mut k = 0;
    while k < items.len() {
        if k + 2 < items.len() && items[k + 1] == '-' {
            if items[k] <= items[k + 2] {
                parts.push_str(&format!("{}-{}", hex(items[k]), hex(items[k + 2])));
            }
            k += 3;
        } else {
            parts.push_str(&hex(items[k]));
            k += 1;
        }
    }
    match (parts.is_empty(), negate) {
        (true, false) => "(?:[^\\x00-\\x{10ffff}])".to_string(),
        (true, true) => ".".to_string(),
        (false, false) => format!("[{parts}]"),
        (false, true) => format!("[^{parts}]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use regex::Regex;

    fn matches(glob: &str, name: &str) -> bool {
        Regex::new(&translate(glob)).unwrap().is_match(name)
    }

    #[test]
    fn globs() {
        assert!(matches("web*", "web01"));
        assert!(matches("web*", "web"));
        assert!(!matches("web*", "aweb"));
        assert!(matches("w?b", "web"));
        assert!(matches("db[0-9]", "db7"));
        assert!(!matches("db[!0-9]", "db7"));
        assert!(matches("db[!0-9]", "dbx"));
        assert!(matches("a[]]b", "a]b"));
        assert!(matches("a[-x]", "a-"));
        assert!(matches("a[", "a["));
        assert!(matches("x.y", "x.y"));
        assert!(!matches("x.y", "xzy"));
        assert!(!matches("WEB", "web"));
        assert!(!matches("a[z-a]", "az"));
    }
}
