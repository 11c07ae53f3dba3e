//! OpenSSH's host patterns, as `known_hosts` and `ssh_config`'s `Host` lines write them:
//! the known_hosts module and the controller's ssh connection match them alike.

/// Whether `text` matches `pattern`: `*` any run of characters, `?` any one, anything
/// else itself (callers lowercase both, as OpenSSH compares host names).
pub fn pattern_match(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    let (mut pi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::pattern_match;

    #[test]
    fn stars_and_question_marks() {
        assert!(pattern_match("*.example.com", "web.example.com"));
        assert!(pattern_match("w?b*", "web1"));
        assert!(!pattern_match("w?b", "web1"));
        assert!(pattern_match("*", ""));
        assert!(!pattern_match("a*c", "abd"));
    }
}
