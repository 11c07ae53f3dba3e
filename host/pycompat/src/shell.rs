//! POSIX shell quoting as Python's `shlex.quote` and `shlex.join` write it: how the
//! controller writes command lines for the node's shell, and how modules report a
//! command they ran.

/// `shlex.quote(text)`: the text as one POSIX shell word, unchanged when it holds only
/// safe characters, else in single quotes.
pub fn quote(text: &str) -> String {
    if text.is_empty() {
        return "''".into();
    }
    let safe = |c: char| c.is_ascii_alphanumeric() || "@%+=:,./-_".contains(c);
    if text.chars().all(safe) {
        return text.to_string();
    }
    format!("'{}'", text.replace('\'', "'\"'\"'"))
}

/// `shlex.join(words)`: a command line of quoted words.
pub fn join<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| quote(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_like_shlex() {
        assert_eq!(quote(""), "''");
        assert_eq!(quote("/usr/bin/env"), "/usr/bin/env");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\"'\"'s'");
        assert_eq!(join(&["echo", "a;b"]), "echo 'a;b'");
    }
}
