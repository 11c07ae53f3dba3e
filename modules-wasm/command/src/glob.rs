//! Whether a `creates`/`removes` pattern matches anything, with the rules of
//! Python's `glob.glob` that Ansible's command module uses: `*`, `?` and `[...]`
//! (`[!...]` negates) within one path component, names starting with `.` only
//! matched by a component that starts with `.` too, no escapes, and a pattern
//! without wildcards matching when the path exists (a dangling symlink counts).

use std::fs;
use std::path::{Path, PathBuf};

/// True when at least one existing path matches `pattern`.
pub fn any_match(pattern: &str) -> bool {
    if pattern.is_empty() {
        return false;
    }
    let base = if pattern.starts_with('/') {
        PathBuf::from("/")
    } else {
        PathBuf::new()
    };
    let parts: Vec<&str> = pattern.split('/').filter(|p| !p.is_empty()).collect();
    exists_below(base, &parts, pattern.ends_with('/'))
}

/// Whether some path `base/parts...` exists, expanding wildcards in `parts`.
fn exists_below(base: PathBuf, parts: &[&str], must_be_dir: bool) -> bool {
    let Some((first, rest)) = parts.split_first() else {
        return if must_be_dir {
            fs::metadata(&base).is_ok_and(|m| m.is_dir())
        } else {
            fs::symlink_metadata(&base).is_ok()
        };
    };
    if !has_magic(first) {
        return exists_below(base.join(first), rest, must_be_dir);
    }
    let dir: &Path = if base.as_os_str().is_empty() {
        Path::new(".")
    } else {
        &base
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return false;
    };
    let show_hidden = first.starts_with('.');
    entries.flatten().any(|entry| {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return false;
        };
        (show_hidden || !name.starts_with('.'))
            && fnmatch(first, name)
            && exists_below(base.join(name), rest, must_be_dir)
    })
}

fn has_magic(part: &str) -> bool {
    part.contains(['*', '?', '['])
}

/// Shell-style match of one whole name against one pattern component.
fn fnmatch(pattern: &str, name: &str) -> bool {
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
    use super::*;

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
    fn finds_existing_paths_with_wildcards() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir(root.join("sub")).unwrap();
        fs::write(root.join("sub/one.log"), "").unwrap();
        fs::write(root.join(".hidden"), "").unwrap();
        let r = root.to_str().unwrap();
        assert!(any_match(&format!("{r}/sub/one.log")));
        assert!(any_match(&format!("{r}/s*/*.log")));
        assert!(any_match(&format!("{r}/sub/")));
        assert!(!any_match(&format!("{r}/sub/one.log/")));
        assert!(!any_match(&format!("{r}/*/*.txt")));
        assert!(!any_match(&format!("{r}/*hidden")));
        assert!(any_match(&format!("{r}/.h*")));
        assert!(!any_match(&format!("{r}/missing")));
        assert!(!any_match(""));
    }

    #[cfg(unix)]
    #[test]
    fn a_dangling_symlink_exists() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("dangling");
        std::os::unix::fs::symlink("/nonexistent/target", &link).unwrap();
        assert!(any_match(link.to_str().unwrap()));
    }
}
