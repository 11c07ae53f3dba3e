//! Small helpers the collectors share: reading a file as ansible-core's
//! `get_file_content` does, and fnmatch-style globs for `filter`.

use sandball_guest_sdk::host;

/// A file's text with surrounding whitespace removed; `None` when it cannot be read
/// (missing, not granted, not text) — as ansible-core's `get_file_content`.
pub fn read(path: &str) -> Option<String> {
    std::fs::read(path)
        .ok()
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
}

/// A file's text unchanged, or empty.
pub fn read_raw(path: &str) -> String {
    std::fs::read(path)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

/// Whether a well-known marker path exists (see `host::present`); false when the
/// shim does not answer for it.
pub fn present(path: &str) -> bool {
    host::present(path).unwrap_or(false)
}

/// Whether `path` exists as far as the module can see (granted files only).
pub fn exists(path: &str) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// The last component of a path.
pub fn basename(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

/// Python's `fnmatch.fnmatch` on POSIX: `*`, `?`, `[seq]`, `[!seq]`, case-sensitive.
pub fn fnmatch(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    glob_at(&p, &n)
}

fn glob_at(p: &[char], n: &[char]) -> bool {
    match p.first() {
        None => n.is_empty(),
        Some('*') => (0..=n.len()).any(|i| glob_at(&p[1..], &n[i..])),
        Some('?') => !n.is_empty() && glob_at(&p[1..], &n[1..]),
        Some('[') => match class(&p[1..]) {
            Some((set, negate, used)) => {
                n.first().is_some_and(|c| set(*c) != negate) && glob_at(&p[1 + used..], &n[1..])
            }
            None => n.first() == Some(&'[') && glob_at(&p[1..], &n[1..]),
        },
        Some(c) => n.first() == Some(c) && glob_at(&p[1..], &n[1..]),
    }
}

type Matcher = Box<dyn Fn(char) -> bool>;

/// A `[...]` class after its `[`: the matcher, whether it is negated, and how many
/// pattern characters it used (through the `]`).
fn class(p: &[char]) -> Option<(Matcher, bool, usize)> {
    let mut i = 0;
    let negate = matches!(p.first(), Some('!'));
    if negate {
        i += 1;
    }
    let mut ranges: Vec<(char, char)> = Vec::new();
    let start = i;
    while i < p.len() {
        if p[i] == ']' && i > start {
            return Some((
                Box::new(move |c| ranges.iter().any(|(a, b)| *a <= c && c <= *b)),
                negate,
                i + 1,
            ));
        }
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            ranges.push((p[i], p[i + 2]));
            i += 3;
        } else {
            ranges.push((p[i], p[i]));
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_as_fnmatch() {
        assert!(fnmatch("ansible_*_mb", "ansible_memtotal_mb"));
        assert!(!fnmatch("ansible_*_mb", "ansible_memory_mb_x"));
        assert!(fnmatch("ansible_eth[0-2]", "ansible_eth1"));
        assert!(!fnmatch("ansible_eth[0-2]", "ansible_eth3"));
        assert!(fnmatch("ansible_eth[!0]", "ansible_eth3"));
        assert!(fnmatch("a?c", "abc"));
        assert!(fnmatch("[", "["));
        assert!(!fnmatch("ansible_lo", "ansible_local"));
    }

    #[test]
    fn basenames() {
        assert_eq!(basename("/sys/class/net/eth0"), "eth0");
        assert_eq!(basename("systemd"), "systemd");
    }
}
